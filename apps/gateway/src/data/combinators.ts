// Combinators (the original's saved single-property queries, which its iOS and web clients use for
// filtered feeds): the owner stores endpoint queries under a name, with the bundles' filter operators
// (`between`, `datetimeExtract` …), and runs them with an order and a page of its choosing.
import type { DataCombinatorRepository, RecordQuery } from '@pds/db';
import { ApiError } from '@pds/http';
import type { Clock } from '@pds/tokens';
import { requireOwner, type Caller } from '../context';
import type { ResolvedInstance } from '../instances/registry';
import { parseCombinator, propertySelection, type EndpointQueries } from './bundle-input';
import type { BundleService } from './bundles';
import type { RecordView } from './service';

/** The original's names (`[0-9a-z-/]+`), bounded. */
export const COMBINATOR_NAME = /^[0-9a-z-]{1,64}(\/[0-9a-z-]{1,64}){0,3}$/;

export class CombinatorService {
  constructor(
    private readonly combinators: DataCombinatorRepository,
    private readonly bundles: BundleService,
    private readonly clock: Clock,
  ) {}

  async define(tenant: ResolvedInstance, caller: Caller, input: { name: string; body: unknown }): Promise<void> {
    requireOwner(caller);
    if (!COMBINATOR_NAME.test(input.name)) throw ApiError.badRequest('name: must be 1-4 segments of a-z, 0-9 and - joined by /');
    await this.combinators.save(tenant.instance.id, input.name, parseCombinator(input.body), this.clock());
  }

  /** The records the combinator selects now, in the order and page asked for. */
  async values(tenant: ResolvedInstance, caller: Caller, input: { name: string; query: RecordQuery }): Promise<RecordView[]> {
    requireOwner(caller);
    const instanceId = tenant.instance.id;
    const stored = COMBINATOR_NAME.test(input.name) ? await this.combinators.find(instanceId, input.name) : null;
    if (!stored) throw ApiError.notFound(`Combinator ${input.name} not found`);
    const { orderBy, descending, skip, take } = input.query;
    const selection = propertySelection(stored.query as EndpointQueries, {
      ...(orderBy ? { orderBy } : {}),
      descending,
      skip,
      limit: take,
    });
    const { records = [] } = await this.bundles.evaluateSelections(instanceId, [['records', selection]]);
    return records;
  }
}
