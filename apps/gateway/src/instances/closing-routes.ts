// The owner's closing flow: close (password re-entered), read the closing state with its grace date,
// cancel. The last two are `whileClosing`: once the instance is closing they are the only calls its
// owner's token still makes (everything else answers 410, to the owner too).
import { z } from 'zod';
import { json } from '@pds/http';
import { route, type GatewayRoute } from '../route';
import type { ClosingService, CloseState } from './closing';

const tag = 'instance';
const PATH = '/api/v2.6/instance/close';
const closeState = z.object({
  state: z.enum(['active', 'suspended', 'closing']),
  closeAfter: z.iso.datetime().optional().describe('While closing: when the instance and all its data are erased'),
});
const view = (state: CloseState) =>
  state.closeAfter ? { state: state.state, closeAfter: state.closeAfter.toISOString() } : { state: state.state };

export function closingRoutes(closing: ClosingService): GatewayRoute[] {
  return [
    route({
      method: 'post',
      path: PATH,
      access: 'owner',
      tag,
      summary: 'Close the instance: every token is refused at once, and after the grace period everything is erased',
      description:
        'The owner re-enters their password. The instance answers 410 to every call but its owner’s log-in, this state and the cancel ' +
        'until `closeAfter` (INSTANCE_CLOSE_GRACE_DAYS, 7 by default); then its files, records, accounts and keys are erased and its address retired.',
      body: z.object({ password: z.string().min(1, 'is required').max(256) }),
      responses: {
        200: { description: 'Closing, with the date it is erased', body: closeState },
        403: { description: 'The password is not right; nothing changed' },
        409: { description: 'The instance is not active' },
      },
      handle: async ({ tenant, caller, body, client }) => json(view(await closing.close(tenant, caller, body, client))),
    }),
    route({
      method: 'get',
      path: PATH,
      access: 'owner',
      whileClosing: true,
      tag,
      summary: 'Whether the instance is closing, and when it will be erased',
      responses: { 200: { description: 'The state, and the grace date while closing', body: closeState } },
      handle: async ({ tenant, caller }) => json(view(await closing.status(tenant, caller))),
    }),
    route({
      method: 'post',
      path: `${PATH}/cancel`,
      access: 'owner',
      whileClosing: true,
      tag,
      summary: 'Stop closing the instance before its grace date: it serves everyone again, with the tokens issued before',
      responses: {
        200: { description: 'Active again (suspended, when the operator closed a suspended instance)', body: closeState },
        409: { description: 'The instance is not closing, or its grace period has ended' },
      },
      handle: async ({ tenant, caller }) => json(view(await closing.cancel(tenant, caller))),
    }),
  ];
}
