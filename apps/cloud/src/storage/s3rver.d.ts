/** The part of s3rver (an independent S3 emulator, test-only) that the compatibility test uses. */
declare module 's3rver' {
  export type S3rverOptions = {
    address?: string
    /** 0 picks a free port; `run()` reports it. */
    port?: number
    directory: string
    silent?: boolean
    configureBuckets?: { name: string }[]
  }

  export default class S3rver {
    constructor(options: S3rverOptions)
    run(): Promise<{ address: string; port: number }>
    close(): Promise<void>
  }
}
