// OpenAPI description of the sign-up route (see @pds/http openapi.ts).
import { z } from 'zod';
import type { ApiOperation } from '@pds/http';
import { signupSchema } from './service';

export const signupApi: ApiOperation[] = [
  {
    method: 'post',
    path: '/api/signup',
    tag: 'sign-up',
    auth: 'none',
    summary: 'Create an instance and its owner account',
    description: 'Sent to the cluster domain or to the would-be instance address; the instance is `<username>.<cluster domain>`.',
    body: signupSchema,
    responses: {
      201: {
        description: 'The instance, its owner and an owner token',
        body: z.object({ instance: z.string(), userId: z.uuid(), accessToken: z.string() }),
      },
      409: { description: 'The username is taken' },
    },
  },
];
