import type { Page } from 'playwright-core'
import type { TestCloud } from '../../cloud/test/cloud-server.js'

/** The password of the accounts the browser tests create, in the cloud and in the relay. */
export const password = 'correct horse battery staple'

/** Fills in the cloud's own sign-in page, which the relay sent the browser to. */
export async function signInAtCloud(page: Page, cloud: TestCloud, email: string): Promise<void> {
  await page.waitForURL((url) => url.origin === cloud.url && url.pathname.startsWith('/interaction/'))
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
}
