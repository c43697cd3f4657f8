/** Where backup files live: the embedded S3-compatible endpoint by default, any S3 store in production. */
export interface ObjectStore {
  /**
   * A presigned PUT for exactly `contentLength` bytes with Content-Type `application/octet-stream`;
   * when `sha256` (hex) is given, the store refuses a body with any other checksum. The uploader
   * must send `headers` as given.
   */
  presignUpload(key: string, options: PresignUploadOptions): Promise<PresignedRequest>
  /** A presigned GET of the object; `filename` names the download. */
  presignDownload(key: string, options: { expiresInSeconds: number; filename?: string }): Promise<PresignedRequest>
  /** Size and SHA-256 (hex, when the store has one) of a stored object; undefined when there is none. */
  head(key: string): Promise<StoredObject | undefined>
  /** Removes objects; missing ones are not an error. */
  delete(keys: readonly string[]): Promise<void>
  /** Releases the client's connections; call once when the app closes. */
  close(): void
}

export type PresignUploadOptions = { contentLength: number; sha256?: string; expiresInSeconds: number }

export type PresignedRequest = {
  url: string
  /** Headers the request must carry exactly (they are part of the signature). */
  headers: Record<string, string>
  expiresAt: Date
}

export type StoredObject = { size: number; sha256: string | undefined }
