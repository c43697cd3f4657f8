import type {
  AckBody,
  CreateNotificationBody,
  ErrorBody,
  Notification,
  NotificationType,
  PendingReply,
} from '@relay/contracts'
import { featureFlagDefaults } from '@relay/contracts'
import { chromiumProblem, launchChromium, requirement } from '@relay/testkit'
import type { Browser, Page, Request } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type RelayUnderTest, startRelay } from './relay-under-test'

const chromium = requirement('Chromium', chromiumProblem())

/** The lowest interval the relay accepts, so toasts appear within about a second. */
const fastPolling = { notifications_polling_interval: 1000 }
const visibleToasts = '[data-sonner-toast]:not([data-removed="true"])'
const long = 60_000
const isPoll = (request: Request) => new URL(request.url()).pathname === '/api/notifications/pending'
/** A new tab's first poll: it has no cursor yet. */
const isFirstPoll = (request: Request) => isPoll(request) && !new URL(request.url()).searchParams.has('since')

describe.skipIf(!chromium.available)('Notifications in Chromium', () => {
  let browser: Browser

  beforeAll(async () => {
    browser = await launchChromium()
  })

  afterAll(async () => {
    await browser?.close()
  })

  describe('toasts', () => {
    let relay: RelayUnderTest
    let page: Page

    beforeEach(async () => {
      relay = await startRelay()
      await relay.setFlags(fastPolling)
      page = await browser.newPage()
    })

    afterEach(async () => {
      await page?.close()
      await relay?.close()
    })

    const open = async (path = '/system') => {
      await page.goto(`${relay.baseUrl}${path}`)
      await page.getByRole('navigation', { name: 'Main' }).waitFor()
    }
    const toastOf = (notification: Notification) => page.getByTestId(`toast-${notification.id}`)
    const shownIds = async () => {
      const testIds = await page.locator(visibleToasts).evaluateAll((toasts) => toasts.map((t) => t.dataset.testid))
      return testIds.map((testId) => String(testId).replace(/^toast-/, '')).sort()
    }
    const idsOf = (notifications: Notification[]) => notifications.map((n) => n.id).sort()
    const isDelivered = async (notification: Notification) => (await relay.notification(notification.id)).isDelivered
    /**
     * Resolves once the page has handled `count` replies to polls sent from now on (from a new tab's
     * first poll with `fromFirstPoll`). After a reply the page renders its toasts (next tick) and sends
     * their acknowledgements (250 ms) before it polls again (a polling interval, at least a second), so
     * the poll after a reply marks that reply as handled. No sleep: slower polling only waits longer.
     */
    const pollsHandled = (count: number, { fromFirstPoll = false } = {}) => {
      let counted = 0
      let counting = !fromFirstPoll
      return page.waitForRequest(
        (request) => {
          counting ||= isFirstPoll(request)
          return counting && isPoll(request) && ++counted > count
        },
        { timeout: 10_000 },
      )
    }

    it('shows each type in its colour, then closes the toast by itself after its duration', async () => {
      await open()
      const bodies = (['success', 'error', 'warning', 'info'] as const).map(
        (type): CreateNotificationBody => ({
          type,
          category: 'system',
          title: `A ${type}`,
          message: `${type} body`,
          duration: 1500,
        }),
      )
      const created = await relay.notifyAll(bodies)

      await toastOf(created[0] as Notification).waitFor({ timeout: 5000 })
      const shownAt = Date.now()
      for (const notification of created) {
        const toast = toastOf(notification)
        await toast.waitFor({ timeout: 5000 })
        expect(await toast.getAttribute('data-type')).toBe(notification.type)
        expect(await toast.textContent()).toContain(`A ${notification.type}`)
        expect(await toast.textContent()).toContain(`${notification.type} body`)
        const background = await toast.evaluate((element) => getComputedStyle(element).backgroundColor)
        expect(colourName(background), `${notification.type} toast is ${background}`).toBe(
          expectedColour[notification.type],
        )
      }
      await toastOf(created[0] as Notification).waitFor({ state: 'detached', timeout: 5000 })
      const shownFor = Date.now() - shownAt
      expect(shownFor).toBeGreaterThanOrEqual(1200)
      expect(shownFor).toBeLessThan(4000)
      for (const notification of created) {
        await toastOf(notification).waitFor({ state: 'detached', timeout: 5000 })
      }
      await expect.poll(() => Promise.all(created.map(isDelivered))).toEqual([true, true, true, true])
    })

    it('shows the message alone when there is no title, and closes with the close button', async () => {
      await open()
      const notification = await relay.notify({ message: 'Device kitchen-sensor connected', duration: long })
      const toast = toastOf(notification)
      await toast.waitFor({ timeout: 5000 })
      expect((await toast.locator('[data-title]').textContent())?.trim()).toBe('Device kitchen-sensor connected')
      expect(await toast.locator('[data-description]').count()).toBe(0)

      await toast.getByRole('button', { name: 'Dismiss notification' }).click()
      await toast.waitFor({ state: 'detached', timeout: 2000 })
      expect(await isDelivered(notification)).toBe(true)
    })

    it('shows at most notifications_max_concurrent at once and the rest, in order, as visible ones are closed', async () => {
      await relay.setFlags({ notifications_max_concurrent: 5 })
      const acknowledged: string[] = []
      page.on('request', (request) => {
        if (request.method() === 'POST' && new URL(request.url()).pathname === '/api/notifications/ack') {
          acknowledged.push(...(request.postDataJSON() as AckBody).ids)
        }
      })
      const created = await relay.notifyAll(
        Array.from({ length: 8 }, (_, i) => ({ message: `Queued ${i + 1}`, category: 'api' as const, duration: long })),
      )
      await open()

      await expect.poll(shownIds, { timeout: 5000 }).toEqual(idsOf(created.slice(0, 5)))
      // Another poll later, still five: the other three wait, unacknowledged, instead of showing or timing out.
      await pollsHandled(1)
      expect(await shownIds()).toEqual(idsOf(created.slice(0, 5)))
      expect(acknowledged.sort()).toEqual(idsOf(created.slice(0, 5)))
      await expect
        .poll(() => Promise.all(created.map(isDelivered)))
        .toEqual([...Array(5).fill(true), false, false, false])

      for (const notification of created.slice(0, 2)) {
        await toastOf(notification).getByRole('button', { name: 'Dismiss notification' }).click()
      }
      await expect.poll(shownIds, { timeout: 3000 }).toEqual(idsOf(created.slice(2, 7)))

      for (const notification of created.slice(2, 5)) {
        await toastOf(notification).getByRole('button', { name: 'Dismiss notification' }).click()
      }
      await expect.poll(shownIds, { timeout: 3000 }).toEqual(idsOf(created.slice(5, 8)))
      await expect.poll(() => Promise.all(created.map(isDelivered))).toEqual(Array(8).fill(true))
    })

    it('brings waiting notifications on screen as visible ones close by themselves', async () => {
      await relay.setFlags({ notifications_max_concurrent: 2 })
      const created = await relay.notifyAll(
        Array.from({ length: 4 }, (_, i) => ({
          message: `Short ${i + 1}`,
          category: 'system' as const,
          duration: 1500,
        })),
      )
      await open()
      await expect.poll(shownIds, { timeout: 5000 }).toEqual(idsOf(created.slice(0, 2)))
      await expect.poll(shownIds, { timeout: 5000 }).toEqual(idsOf(created.slice(2, 4)))
      await expect.poll(shownIds, { timeout: 5000 }).toEqual([])
      await expect.poll(() => Promise.all(created.map(isDelivered))).toEqual(Array(4).fill(true))
    })

    it('never shows a category whose flag is off, and acknowledges it so it is not offered again', async () => {
      await relay.setFlags({ notifications_cloud_sync: false })
      await open()
      const hidden = await relay.notify({ message: 'Cloud sync started', category: 'cloud', duration: long })
      const shown = await relay.notify({ message: 'Junction started', category: 'system', duration: long })

      await toastOf(shown).waitFor({ timeout: 5000 })
      await pollsHandled(1)
      expect(await toastOf(hidden).count()).toBe(0)
      expect(await shownIds()).toEqual([shown.id])
      await expect.poll(() => isDelivered(hidden)).toBe(true)

      // A fresh tab asks for what is undelivered: the hidden one is not in it.
      const firstReply = page.waitForResponse((response) => isFirstPoll(response.request()))
      const firstReplyHandled = pollsHandled(1, { fromFirstPoll: true })
      await page.reload()
      const { notifications } = (await (await firstReply).json()) as PendingReply
      expect(notifications.map((n) => n.id)).not.toContain(hidden.id)
      await firstReplyHandled
      expect(await toastOf(hidden).count()).toBe(0)
    })

    it('shows nothing and does not poll while notifications are switched off, and catches up once on', async () => {
      await relay.setFlags({ notifications_enabled: false })
      const requests: string[] = []
      page.on('request', (request) => {
        if (isPoll(request)) {
          requests.push('poll')
        } else if (request.method() === 'PUT' && new URL(request.url()).pathname === '/api/feature-flags') {
          requests.push('save')
        }
      })
      const notification = await relay.notify({ message: 'Nobody sees this', duration: long })
      await page.clock.install()
      await open('/settings')
      // The switch shows only once the flags have arrived, and the toasts render from the same query.
      const showNotifications = page.getByLabel('Show notifications')
      await showNotifications.waitFor()
      expect(await showNotifications.isChecked()).toBe(false)
      // A click is a new render, and React runs the effects of the last one first: the polling effect has
      // seen the flags. Then a few polling intervals pass on the page's clock, firing any timer it set.
      await showNotifications.check()
      await page.clock.runFor(fastPolling.notifications_polling_interval * 3)
      expect(await page.locator(visibleToasts).count()).toBe(0)
      expect(requests).toEqual([])
      expect(await isDelivered(notification)).toBe(false)

      // Switched on, the same tab polls and shows what waited: the silence above was the switch.
      await page.getByRole('button', { name: 'Save changes' }).click()
      await toastOf(notification).waitFor({ timeout: 5000 })
      expect(requests[0]).toBe('save')
      expect(requests).toContain('poll')
    })
  })

  describe('history page', () => {
    let relay: RelayUnderTest
    let page: Page
    let created: Notification[]

    beforeAll(async () => {
      relay = await startRelay()
      // No toasts over the table.
      await relay.setFlags({ notifications_enabled: false })
      created = await relay.notifyAll([
        { type: 'success', category: 'api', message: 'Settings saved' },
        { type: 'error', category: 'auth', title: 'Sign-in failed', message: 'Wrong password for admin' },
        { type: 'info', category: 'system', message: 'Junction stopped' },
        { type: 'success', category: 'api', message: 'Device added' },
        { type: 'warning', category: 'cloud', title: 'Cloud sign-in needed', message: 'Sign in to keep backing up' },
        { type: 'error', category: 'auth', message: 'Session expired' },
        { type: 'info', category: 'system', title: 'Relay 2.1', message: 'Relay 2.1 is available' },
        { type: 'success', category: 'api', message: 'Stream created' },
      ])
      page = await browser.newPage()
    })

    afterAll(async () => {
      await page?.close()
      await relay?.close()
    })

    const rows = () => page.getByTestId('history-row')
    const rowAttributes = (name: string) => rows().evaluateAll((els, n) => els.map((el) => el.getAttribute(n)), name)
    const total = () => page.getByTestId('history-total').textContent()

    it('lists every notification, newest first, with its type, category, text, time and delivery', async () => {
      await page.goto(`${relay.baseUrl}/notifications`)
      await page.getByRole('heading', { level: 1, name: 'Notifications' }).waitFor()
      await expect.poll(total).toBe('8 notifications')
      expect(await rowAttributes('data-id')).toEqual(created.map((n) => n.id).reverse())

      const signInFailed = rows().filter({ hasText: 'Sign-in failed' })
      expect(await signInFailed.getAttribute('data-type')).toBe('error')
      expect(await signInFailed.getAttribute('data-category')).toBe('auth')
      expect(await signInFailed.textContent()).toContain('Wrong password for admin')
      expect(await signInFailed.textContent()).toContain('Authentication')
      expect(await signInFailed.textContent()).toContain('Pending')
      const time = signInFailed.locator('time')
      expect(await time.textContent()).toBe('just now')
      expect(new Date(String(await time.getAttribute('datetime'))).toISOString()).toBe(created[1]?.createdAt)
      expect(await time.getAttribute('title')).toBeTruthy()
    })

    it('filters by category and by type, keeps the filters in the URL, and counts what matches', async () => {
      await page.goto(`${relay.baseUrl}/notifications`)
      await expect.poll(total).toBe('8 notifications')

      await page.getByLabel('Category').selectOption('auth')
      await expect.poll(total).toBe('2 matching notifications')
      expect(await rowAttributes('data-category')).toEqual(['auth', 'auth'])
      expect(new URL(page.url()).searchParams.get('category')).toBe('auth')

      await page.getByLabel('Category').selectOption('')
      await page.getByLabel('Type').selectOption('success')
      await expect.poll(total).toBe('3 matching notifications')
      expect(await rowAttributes('data-type')).toEqual(['success', 'success', 'success'])

      await page.getByLabel('Category').selectOption('system')
      await expect.poll(total).toBe('0 matching notifications')
      await page.getByText('No notifications match these filters.').waitFor()

      await page.getByLabel('Type').selectOption('info')
      await expect.poll(total).toBe('2 matching notifications')
      await page.reload()
      await expect.poll(total).toBe('2 matching notifications')
      expect(await page.getByLabel('Category').inputValue()).toBe('system')
      expect(await page.getByLabel('Type').inputValue()).toBe('info')
      expect(await rowAttributes('data-type')).toEqual(['info', 'info'])

      await page.getByRole('button', { name: 'Clear filters' }).first().click()
      await expect.poll(total).toBe('8 notifications')
    })

    it('pages through older notifications and back', async () => {
      const more = await relay.notifyAll(Array.from({ length: 22 }, (_, i) => ({ message: `Reading ${i + 1}` })))
      const all = [...created, ...more].reverse()
      await page.goto(`${relay.baseUrl}/notifications`)
      await expect.poll(total).toBe('30 notifications')
      expect(await rowAttributes('data-id')).toEqual(all.slice(0, 25).map((n) => n.id))
      expect(await page.getByRole('button', { name: /Newer/ }).isDisabled()).toBe(true)

      await page.getByRole('button', { name: /Older/ }).click()
      await expect.poll(() => rows().count()).toBe(5)
      expect(await rowAttributes('data-id')).toEqual(all.slice(25).map((n) => n.id))
      expect(await page.getByRole('button', { name: /Older/ }).isDisabled()).toBe(true)

      await page.getByRole('button', { name: /Newer/ }).click()
      await expect.poll(() => rows().count()).toBe(25)
      expect(await rowAttributes('data-id')).toEqual(all.slice(0, 25).map((n) => n.id))
    })

    it('says so when the history cannot be loaded', async () => {
      const failing = await browser.newPage()
      await failing.route('**/api/notifications/history*', (route) =>
        route.fulfill({
          status: 503,
          json: { success: false, error: 'Database unavailable', code: 'UNAVAILABLE' } satisfies ErrorBody,
        }),
      )
      await failing.goto(`${relay.baseUrl}/notifications`)
      await failing.getByTestId('history-error').waitFor({ timeout: 10_000 })
      expect(await failing.getByTestId('history-error').textContent()).toContain('Database unavailable')
      await failing.close()
    })
  })

  describe('settings page', () => {
    let relay: RelayUnderTest
    let page: Page

    beforeEach(async () => {
      relay = await startRelay()
      page = await browser.newPage()
      await page.goto(`${relay.baseUrl}/settings`)
      await page.getByRole('heading', { level: 2, name: 'Notifications' }).waitFor()
    })

    afterEach(async () => {
      await page?.close()
      await relay?.close()
    })

    it('shows the relay flags, saves only what changed, and keeps it after a reload', async () => {
      expect(await page.getByLabel('Show notifications').isChecked()).toBe(true)
      expect(await page.getByLabel('Polling interval').inputValue()).toBe('15')
      expect(await page.getByLabel('Visible at once').inputValue()).toBe('5')
      expect(await page.getByLabel('Success messages').inputValue()).toBe('6')

      await page.getByLabel('Cloud sync').uncheck()
      await page.getByLabel('Visible at once').fill('3')
      await page.getByLabel('Polling interval').fill('2.5')
      const sent = page.waitForRequest((request) => request.method() === 'PUT')
      await page.getByRole('button', { name: 'Save changes' }).click()
      expect((await sent).postDataJSON()).toEqual({
        notifications_polling_interval: 2500,
        notifications_max_concurrent: 3,
        notifications_cloud_sync: false,
      })
      await expect.poll(() => page.getByTestId('settings-status').textContent()).toMatch(/^Saved/)

      const flags = await relay.flags()
      expect(flags).toMatchObject({
        notifications_cloud_sync: false,
        notifications_max_concurrent: 3,
        notifications_polling_interval: 2500,
      })
      await page.reload()
      await page.getByLabel('Cloud sync').waitFor()
      expect(await page.getByLabel('Cloud sync').isChecked()).toBe(false)
      expect(await page.getByLabel('Visible at once').inputValue()).toBe('3')
      expect(await page.getByLabel('Polling interval').inputValue()).toBe('2.5')
    })

    it("shows the relay's validation message on the field and saves nothing", async () => {
      const refused = await relay.call<ErrorBody>('PUT', '/api/feature-flags', { notifications_max_concurrent: 50 })
      expect(refused.status).toBe(400)
      const serverMessage = refused.body.details?.[0]?.message
      expect(serverMessage).toBeTruthy()

      await page.getByLabel('Visible at once').fill('50')
      await page.getByRole('button', { name: 'Save changes' }).click()
      const fieldError = page.getByTestId('error-notifications_max_concurrent')
      await fieldError.waitFor()
      expect(await fieldError.textContent()).toBe(serverMessage)
      expect(await page.getByLabel('Visible at once').getAttribute('aria-invalid')).toBe('true')

      // Seconds on screen, milliseconds on the wire: the message speaks the field's unit.
      await page.getByLabel('Visible at once').fill('4')
      await page.getByLabel('Polling interval').fill('0.5')
      await page.getByRole('button', { name: 'Save changes' }).click()
      const intervalError = page.getByTestId('error-notifications_polling_interval')
      await intervalError.waitFor()
      expect(await intervalError.textContent()).toMatch(/1 s/)
      expect(await relay.flags()).toEqual(featureFlagDefaults)
    })

    it('disables the other controls while notifications are off, and resets to the defaults', async () => {
      await relay.setFlags({ notifications_max_concurrent: 9, notifications_system: false })
      await page.reload()
      await page.getByLabel('Show notifications').waitFor()
      expect(await page.getByLabel('Visible at once').inputValue()).toBe('9')

      await page.getByLabel('Show notifications').uncheck()
      for (const label of ['Fetch notifications from the relay', 'Polling interval', 'Visible at once', 'API calls']) {
        expect(await page.getByLabel(label).isDisabled(), label).toBe(true)
      }
      await page.getByLabel('Show notifications').check()
      expect(await page.getByLabel('Visible at once').isDisabled()).toBe(false)

      await page.getByRole('button', { name: 'Reset to defaults' }).click()
      expect(await page.getByLabel('Visible at once').inputValue()).toBe('5')
      expect(await page.getByLabel('System').isChecked()).toBe(true)
      await page.getByRole('button', { name: 'Save changes' }).click()
      await expect.poll(() => page.getByTestId('settings-status').textContent()).toMatch(/^Saved/)
      expect(await relay.flags()).toEqual(featureFlagDefaults)
    })

    it('applies saved flags to the toasts at once', async () => {
      await relay.setFlags(fastPolling)
      await page.reload()
      await page.getByLabel('System').uncheck()
      await page.getByRole('button', { name: 'Save changes' }).click()
      await expect.poll(() => page.getByTestId('settings-status').textContent()).toMatch(/^Saved/)

      const hidden = await relay.notify({ message: 'Junction stopped', category: 'system', duration: long })
      const shown = await relay.notify({ message: 'Signed in as admin', category: 'auth', duration: long })
      await page.getByTestId(`toast-${shown.id}`).waitFor({ timeout: 5000 })
      expect(await page.getByTestId(`toast-${hidden.id}`).count()).toBe(0)
    })
  })
})

const expectedColour = {
  success: 'green',
  error: 'red',
  warning: 'orange',
  info: 'blue',
} satisfies Record<NotificationType, string>

/** Names the hue of a CSS `rgb()` colour, coarsely: enough to tell the four toast colours apart. */
function colourName(rgb: string): string {
  const [r = 0, g = 0, b = 0] = (rgb.match(/\d+(\.\d+)?/g) ?? []).map((part) => Number(part) / 255)
  const max = Math.max(r, g, b)
  const delta = max - Math.min(r, g, b)
  if (delta === 0) {
    return 'grey'
  }
  let hue = max === r ? ((g - b) / delta) % 6 : max === g ? (b - r) / delta + 2 : (r - g) / delta + 4
  hue = (hue * 60 + 360) % 360
  if (hue < 12 || hue >= 340) {
    return 'red'
  }
  if (hue < 50) {
    return 'orange'
  }
  if (hue >= 80 && hue < 170) {
    return 'green'
  }
  if (hue >= 190 && hue < 260) {
    return 'blue'
  }
  return `hue ${Math.round(hue)}`
}
