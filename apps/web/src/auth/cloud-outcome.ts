import type { CloudLoginOutcome } from '@relay/contracts'
import { createContext, useEffect, useState } from 'react'
import { useLocation, useSearchParams } from 'react-router'
import { isCloudLoginOutcome, outcomeParam } from './cloud-sign-in'

/** Which of the gate's screens shows: null while the status loads. */
export type GateScreen = 'setup' | 'sign-in' | 'app' | null

/** An outcome belongs to the page and the screen it arrived on. */
type Outcome = { outcome: CloudLoginOutcome; pathname: string; screen: GateScreen }
export type OutcomeState = { outcome: CloudLoginOutcome | null; dismiss: () => void }

/** The outcome of the cloud sign-in the browser just came back from; set by the auth gate. */
export const CloudOutcomeContext = createContext<OutcomeState>({ outcome: null, dismiss: () => {} })

/**
 * Takes the result of a cloud sign-in (`?cloud=connected`) off the URL, so a reload or a bookmark
 * does not show it again, and keeps it until it is dismissed, the user moves to another page, or
 * another screen replaces the one it arrived on (signing out).
 */
export function useCloudOutcomeFromUrl(screen: GateScreen): OutcomeState {
  const [searchParams, setSearchParams] = useSearchParams()
  const { pathname } = useLocation()
  const param = searchParams.get(outcomeParam)
  const [held, setHeld] = useState<Outcome | null>(() =>
    isCloudLoginOutcome(param) ? { outcome: param, pathname, screen } : null,
  )

  // Arrived while the status was loading, or just now: it belongs to the first screen that shows.
  if (held && held.screen === null && screen !== null) {
    setHeld({ ...held, screen })
  }

  useEffect(() => {
    if (param === null) {
      return
    }
    if (isCloudLoginOutcome(param)) {
      // The screen it belongs to is settled on the next render.
      setHeld({ outcome: param, pathname, screen: null })
    }
    setSearchParams(
      (previous) => {
        const next = new URLSearchParams(previous)
        next.delete(outcomeParam)
        return next
      },
      { replace: true },
    )
  }, [param, pathname, setSearchParams])

  const isCurrent = held && held.pathname === pathname && (held.screen === null || held.screen === screen)
  return {
    outcome: isCurrent ? held.outcome : null,
    dismiss: () => setHeld(null),
  }
}
