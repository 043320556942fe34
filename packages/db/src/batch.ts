// Several statements sent together and answered together: one round trip to PostgreSQL instead of one
// per statement. pg sends a query, waits for its answer, then sends the next; a change made of several
// statements (a record, its usage, its event) would wait that many times. Here every statement goes out
// as Parse (once per connection, for named statements), Bind, Describe and Execute, and one Sync closes
// them all: PostgreSQL runs them in order, answers them in one reply, and after an error skips the rest up
// to the Sync. Each statement stays its own statement, so on Citus each is planned alone (router-planned
// when it names one instance) rather than as one data-modifying CTE that Citus must split.
//
// It is a pg "submittable" (the interface pg-cursor and pg-query-stream use): pg hands it the connection
// and passes it the backend's messages. pg 8 is pinned; this reads pg's `lib/result` and `lib/utils`.
import type { PoolClient } from 'pg';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const PgResult = require('pg/lib/result') as new () => ResultRows;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

/** One statement of a batch: a fixed text (prepared once per connection under `name`) and its values. */
export interface Statement {
  name: string;
  text: string;
  values: unknown[];
}

/** What a statement answered: its rows, and the number of rows it wrote or read. */
export interface Answer<R = Record<string, unknown>> {
  rows: R[];
  rowCount: number;
}

/** The part of pg's Result a batch uses. */
interface ResultRows {
  rows: Record<string, unknown>[];
  rowCount: number | null;
  addFields(fields: unknown[]): void;
  parseRow(fields: unknown[]): Record<string, unknown>;
  addCommandComplete(message: unknown): void;
}

/** The messages of pg's connection a batch sends, and the named statements it keeps per connection. */
interface WireConnection {
  parse(query: { name: string; text: string; types: number[] }): void;
  bind(config: { statement: string; portal: string; values: unknown[]; valueMapper: (value: unknown) => unknown }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(config: { portal: string; rows: number }): void;
  sync(): void;
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  stream: { cork?(): void; uncork?(): void };
}

class Batch {
  callback?: (error: Error | null, answers?: Answer[]) => void;
  private readonly results: ResultRows[] = [];
  private current = 0;
  /** Statements whose Parse this batch sent: unparsed again if the batch fails before they are parsed. */
  private readonly parsing = new Set<string>();

  constructor(private readonly statements: Statement[]) {}

  // pg reads the name and text of the query it is answering: on ParseComplete it records that named
  // statement as parsed on the connection. They follow the statement being answered.
  get name(): string | undefined {
    return this.statements[this.current]?.name;
  }

  get text(): string | undefined {
    return this.statements[this.current]?.text;
  }

  submit(connection: WireConnection): null {
    connection.stream.cork?.();
    try {
      for (const { name, text, values } of this.statements) {
        if (connection.parsedStatements[name] === undefined && connection.submittedNamedStatements[name] === undefined) {
          connection.parse({ name, text, types: [] });
          connection.submittedNamedStatements[name] = text;
          this.parsing.add(name);
        }
        connection.bind({ statement: name, portal: '', values, valueMapper: prepareValue });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '', rows: 0 });
      }
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(message: { fields: unknown[] }): void {
    this.result().addFields(message.fields);
  }

  handleDataRow(message: { fields: unknown[] }): void {
    const result = this.result();
    result.rows.push(result.parseRow(message.fields));
  }

  handleCommandComplete(message: unknown): void {
    this.result().addCommandComplete(message);
    this.current++;
  }

  handleEmptyQuery(): void {
    this.current++;
  }

  handleError(error: Error, connection: WireConnection): void {
    // PostgreSQL skipped every statement after the failed one: those this batch parsed are not prepared.
    for (const name of this.parsing) {
      if (connection.parsedStatements[name] === undefined) delete connection.submittedNamedStatements[name];
    }
    this.callback?.(error);
  }

  handleReadyForQuery(): void {
    this.callback?.(
      null,
      this.statements.map((_, i) => ({ rows: this.results[i]?.rows ?? [], rowCount: this.results[i]?.rowCount ?? 0 })),
    );
  }

  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}

  private result(): ResultRows {
    return (this.results[this.current] ??= new PgResult());
  }
}

/** Sends the statements on `client` as one batch; each statement's answer, in order. Rejects with the first error. */
export function sendBatch(client: PoolClient, statements: Statement[]): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const batch = new Batch(statements);
    batch.callback = (error, answers) => (error ? reject(error) : resolve(answers ?? []));
    void client.query(batch as never);
  });
}
