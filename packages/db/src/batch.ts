// Several statements sent together and answered together: one round trip to PostgreSQL instead of one
// per statement. pg sends a query, waits for its answer, then sends the next; a change made of several
// statements (a record, its usage, its event) would wait that many times. Here every statement goes out
// as Parse (once per connection, for named statements), Bind and Execute, and one Sync closes them all:
// PostgreSQL runs them in order, answers them in one reply, and after an error skips the rest up to the
// Sync. Each statement stays its own statement, so on Citus each is planned alone (router-planned when it
// names one instance) rather than as one data-modifying CTE that Citus must split.
//
// A prepared statement's rows keep the shape they had when it was parsed (PostgreSQL refuses to run it
// with another: "cached plan must not change result type"), so the shape is asked for (Describe) the
// first time a connection runs the statement and kept with the connection; pg asks on every execution,
// and reading the column names and choosing their parsers again was a fifth of a one-row read's cost in
// the driver.
//
// It is a pg "submittable" (the interface pg-cursor and pg-query-stream use): pg hands it the connection
// and passes it the backend's messages. pg 8 is pinned; this reads pg's `lib/utils`.
import pg, { type PoolClient } from 'pg';
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

type Parser = (text: string) => unknown;

/** A statement's rows as PostgreSQL described them: each column's name and the parser of its type. */
interface Shape {
  names: string[];
  parsers: Parser[];
}

/** The shape of a statement that answers no rows (BEGIN, an UPDATE without RETURNING). */
const NO_ROWS: Shape = { names: [], parsers: [] };

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

interface RowDescription {
  fields: { name: string; dataTypeID: number }[];
}

/** The shapes of the statements each connection has described; a new connection describes them again. */
const shapesOf = new WeakMap<WireConnection, Map<string, Shape>>();

/** The row count ending a CommandComplete tag: `INSERT 0 5`, `UPDATE 3`, `SELECT 1` (none for `BEGIN`). */
const ROW_COUNT = /(\d+)$/;

class Batch {
  private callback?: (error: Error | null, answers: Answer[]) => void;
  private readonly answers: Answer[];
  private current = 0;
  /** The shapes of the connection the batch was submitted on (submit). */
  private shapes!: Map<string, Shape>;
  /** The shape of the statement being answered, once its first row comes. */
  private shape?: Shape;
  /** Per statement, whether this batch asked for its shape: a RowDescription, or NoData, comes first. */
  private readonly described: boolean[] = [];
  /** Statements whose Parse this batch sent: unparsed again if the batch fails before they are parsed. */
  private readonly parsing = new Set<string>();

  constructor(
    private readonly statements: Statement[],
    callback: (error: Error | null, answers: Answer[]) => void,
  ) {
    this.answers = statements.map(() => ({ rows: [], rowCount: 0 }));
    this.callback = callback;
  }

  // pg reads the name and text of the query it is answering: on ParseComplete it records that named
  // statement as parsed on the connection. They follow the statement being answered.
  get name(): string | undefined {
    return this.statements[this.current]?.name;
  }

  get text(): string | undefined {
    return this.statements[this.current]?.text;
  }

  submit(connection: WireConnection): null {
    let shapes = shapesOf.get(connection);
    if (!shapes) shapesOf.set(connection, (shapes = new Map()));
    this.shapes = shapes;
    connection.stream.cork?.();
    try {
      for (const { name, text, values } of this.statements) {
        if (connection.parsedStatements[name] === undefined && connection.submittedNamedStatements[name] === undefined) {
          connection.parse({ name, text, types: [] });
          connection.submittedNamedStatements[name] = text;
          this.parsing.add(name);
        }
        connection.bind({ statement: name, portal: '', values, valueMapper: prepareValue });
        const describe = !shapes.has(name);
        this.described.push(describe);
        if (describe) connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '', rows: 0 });
      }
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(message: RowDescription): void {
    this.shapes.set(this.statements[this.current]!.name, {
      names: message.fields.map((field) => field.name),
      parsers: message.fields.map((field) => pg.types.getTypeParser(field.dataTypeID, 'text') as Parser),
    });
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    const { names, parsers } = (this.shape ??= this.shapes.get(this.statements[this.current]!.name)!);
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) {
      const value = message.fields[i]!;
      row[names[i]!] = value === null ? null : parsers[i]!(value);
    }
    this.answers[this.current]!.rows.push(row);
  }

  handleCommandComplete(message: { text: string }): void {
    // Described, and no RowDescription came: PostgreSQL said NoData, a statement without rows.
    const { name } = this.statements[this.current]!;
    if (this.described[this.current] && !this.shapes.has(name)) this.shapes.set(name, NO_ROWS);
    const count = ROW_COUNT.exec(message.text);
    this.answers[this.current]!.rowCount = count ? Number(count[1]) : 0;
    this.next();
  }

  handleEmptyQuery(): void {
    this.next();
  }

  handleError(error: Error, connection: WireConnection): void {
    // PostgreSQL skipped every statement after the failed one: those this batch parsed are not prepared.
    for (const name of this.parsing) {
      if (connection.parsedStatements[name] === undefined) delete connection.submittedNamedStatements[name];
    }
    // pg has let go of this batch: its ReadyForQuery, if one comes, is no longer passed here.
    this.finish(error);
  }

  handleReadyForQuery(): void {
    this.finish(null);
  }

  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}

  private next(): void {
    this.current++;
    this.shape = undefined;
  }

  private finish(error: Error | null): void {
    const callback = this.callback;
    this.callback = undefined;
    callback?.(error, this.answers);
  }
}

/** Sends the statements on `client` as one batch; each statement's answer, in order. Rejects with the first error. */
export function sendBatch(client: PoolClient, statements: Statement[]): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    void client.query(new Batch(statements, (error, answers) => (error ? reject(error) : resolve(answers))) as never);
  });
}
