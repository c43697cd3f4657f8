import { type CloudLoginOutcome, type CloudLoginQuery, cloudLoginOutcomes, sameOriginPath } from '@relay/contracts'
import { api } from '../api'

/** The query parameter the relay adds to the page it returns to after a cloud sign-in. */
export const outcomeParam = 'cloud'

/**
 * Leaves the UI for the cloud's sign-in page. A full-page navigation, not fetch: the relay answers
 * with a redirect to the cloud, and the browser comes back to `returnTo` when the sign-in ends.
 */
export function goToCloudSignIn(query: CloudLoginQuery): void {
  window.location.assign(api.cloudSignInUrl(query))
}

/** This page, as a `returnTo` the relay accepts: its path and query, without an old outcome. */
export function currentReturnTo(): string {
  const search = new URLSearchParams(window.location.search)
  search.delete(outcomeParam)
  const query = search.toString()
  const path = query ? `${window.location.pathname}?${query}` : window.location.pathname
  return sameOriginPath(path) ?? sameOriginPath(window.location.pathname) ?? '/'
}

export function isCloudLoginOutcome(value: string | null): value is CloudLoginOutcome {
  return cloudLoginOutcomes.some((outcome) => outcome === value)
}

export const outcomeMessages = {
  connected: { title: 'Connected to Relay Cloud', text: 'The relay now acts for your cloud account.' },
  denied: { title: 'Cloud sign-in cancelled', text: 'The sign-in was cancelled or refused. Nothing has changed.' },
  failed: {
    title: 'Cloud sign-in failed',
    text: 'The relay could not complete the sign-in with the cloud, or it took too long. Start it again.',
  },
  unreachable: {
    title: 'Relay Cloud is unreachable',
    text: 'The relay could not reach the cloud to finish the sign-in. Check its network connection and try again.',
  },
  'other-account': {
    title: 'Connected to another cloud account',
    text: 'This relay is connected to a different Relay Cloud account. Disconnect it under Settings → Account first, or sign in with that account.',
  },
} as const satisfies Record<CloudLoginOutcome, { title: string; text: string }>
