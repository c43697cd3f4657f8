import { relayClientId } from '@relay/contracts'
import { checkPageEverywhere, chromiumProblem, launchChromium, requirement } from '@relay/testkit'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { grantFirstParty } from '../../cloud/src/oauth/provider.js'
import { uploadCompletedBackup } from '../../cloud/test/backup-client.js'
import { startTestCloud, type TestCloud } from '../../cloud/test/cloud-server.js'
import { password } from './cloud-sign-in'

const chromium = requirement('Chromium', chromiumProblem())

describe.skipIf(!chromium.available)("the cloud's account page in Chromium", () => {
  let cloud: TestCloud
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let userId: string
  const email = 'account-page@example.com'

  beforeAll(async () => {
    cloud = await startTestCloud('pglite', { env: { LOG_LEVEL: 'warn' } })
    userId = await cloud.addUser(email, password, 'Ada Lovelace')
    await cloud.app.services.licenses.setGifted(userId, true)
    // A completed backup of the person's, so that usage and downloads are on the page.
    await uploadCompletedBackup(cloud, userId, 'relay-in-the-office', {
      size: 2048,
      filename: 'relay-backup-20260510T080000Z.zip',
    })
    const provider = await cloud.app.oauth.provider()
    await grantFirstParty(provider, userId, relayClientId, cloud.app.oauth.audience)
    browser = await launchChromium()
    // The pages' CSP allows no script at all; axe-core is injected past it, as a tester's extension would be.
    context = await browser.newContext({ bypassCSP: true })
    page = await context.newPage()
  })

  afterAll(async () => {
    await context?.close()
    await browser?.close()
    await cloud?.close()
  })

  it('signs in, shows the account, signs a relay out and deletes the account, every page passing axe', async () => {
    await page.goto(`${cloud.url}/account`)
    await page.waitForURL(`${cloud.url}/account/sign-in`)
    await page.getByRole('heading', { level: 1, name: 'Sign in to your account' }).waitFor()
    expect(await checkPageEverywhere(page)).toEqual([])

    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${cloud.url}/account`)
    await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor()
    await expect.poll(() => page.getByText('granted by an operator of this cloud').count()).toBe(1)
    expect(await page.getByRole('link', { name: /^Download relay-backup/ }).count()).toBe(1)
    expect(await checkPageEverywhere(page)).toEqual([])

    const relays = page.getByRole('region', { name: 'Signed-in relays' })
    await relays.getByRole('button', { name: /^Sign out the relay/ }).click()
    await page.getByText('The relay was signed out.').waitFor()
    expect(await relays.getByText('No relay is signed in.').count()).toBe(1)
    const principal = { id: userId, type: 'user', sessionId: undefined, expiresAt: new Date() } as const
    expect(await cloud.app.services.account.listSessions(principal)).toEqual([])

    await page.getByLabel('Your password, to confirm').fill(password)
    await page.getByRole('button', { name: 'Delete my account' }).click()
    await page.getByRole('heading', { level: 1, name: 'Your account was deleted' }).waitFor()
    expect(await checkPageEverywhere(page)).toEqual([])
    expect(await cloud.app.services.directory.find(userId)).toBeUndefined()

    await page.goto(`${cloud.url}/account`)
    await page.waitForURL(`${cloud.url}/account/sign-in`)
  })
})
