import type { DiskObjects } from './disk-objects.js'
import type { ObjectStore } from './object-store.js'

/**
 * The embedded store as the cloud itself uses it: presigned URLs for clients at the public address,
 * but size, checksum and deletes straight from the folder. An instance never reaches its own files
 * over the network, so a public address that is down, or routed to another instance, cannot fail them.
 */
export function createDiskObjectStore({
  objects,
  presigner,
}: {
  objects: DiskObjects
  /** Signs URLs for the embedded endpoint; only its presign methods are used. */
  presigner: ObjectStore
}): ObjectStore {
  return {
    presignUpload: (key, options) => presigner.presignUpload(key, options),
    presignDownload: (key, options) => presigner.presignDownload(key, options),

    async head(key) {
      const object = await objects.stat(key)
      return object && { size: object.size, sha256: object.sha256 }
    },

    async delete(keys) {
      for (const key of keys) {
        await objects.remove(key)
      }
    },

    close() {
      presigner.close()
    },
  }
}
