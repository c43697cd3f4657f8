import { afterAll, beforeAll } from 'vitest'
import type { TestCloud } from '../../cloud/test/cloud-server.js'
import { addCloudUser, createShiftedClock, signInThroughCloud, startCloud, startLinkedRelay } from './cloud.js'
import { startFaultProxy } from './fault-proxy.js'

type FaultProxy = Awaited<ReturnType<typeof startFaultProxy>>

/**
 * One cloud for the suite, reached only through a fault proxy (its public URL is the proxy's), so a
 * test can cut its relays off from the cloud or its object store. Call it inside a `describe`.
 */
export function useCloudBehindFaultProxy() {
  let cloud: TestCloud | undefined
  let proxy: FaultProxy | undefined

  beforeAll(async () => {
    proxy = await startFaultProxy()
    cloud = await startCloud(createShiftedClock(), { CLOUD_PUBLIC_URL: proxy.url })
    proxy.forwardTo(cloud.url)
  })

  afterAll(async () => {
    await cloud?.close()
    await proxy?.close()
  })

  const started = () => {
    if (cloud === undefined || proxy === undefined) {
      throw new Error('the cloud behind the fault proxy starts in beforeAll')
    }
    return { cloud, proxy }
  }

  /** A relay talking to the cloud through the proxy, on `dataDir` (a new folder without one). */
  const startRelay = (dataDir?: string) => {
    const { cloud, proxy } = started()
    return startLinkedRelay(cloud, { dataDir, env: { CLOUD_URL: proxy.url } })
  }

  return {
    get cloud() {
      return started().cloud
    },
    get proxy() {
      return started().proxy
    },
    startRelay,
    /** A relay signed in to a new licensed account, through the proxy. */
    async signedInRelay(dataDir?: string) {
      const { cloud, proxy } = started()
      const user = await addCloudUser(cloud)
      const relay = await startRelay(dataDir)
      await signInThroughCloud(cloud, relay.url, user.email, { cloudUrl: proxy.url })
      return relay
    },
  }
}
