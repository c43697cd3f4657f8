// What the SQLite driver bench uses of Node's built-in `node:sqlite` (Node 22.13+ and 24): the
// workspace's @types/node is the one of Node 20, which has no such module.
declare module 'node:sqlite' {
  type SQLInputValue = null | number | bigint | string | NodeJS.ArrayBufferView
  type SQLOutputValue = null | number | bigint | string | Uint8Array

  export class StatementSync {
    run(...parameters: SQLInputValue[]): { changes: number | bigint; lastInsertRowid: number | bigint }
    get(...parameters: SQLInputValue[]): Record<string, SQLOutputValue> | undefined
    all(...parameters: SQLInputValue[]): Record<string, SQLOutputValue>[]
    iterate(...parameters: SQLInputValue[]): IterableIterator<Record<string, SQLOutputValue>>
    columns(): { name: string }[]
  }

  export class DatabaseSync {
    constructor(path: string, options?: { readOnly?: boolean; timeout?: number })
    exec(sql: string): void
    prepare(sql: string): StatementSync
    close(): void
  }

  export function backup(source: DatabaseSync, path: string, options?: { rate?: number }): Promise<number>
}
