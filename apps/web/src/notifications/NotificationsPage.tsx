import {
  type NotificationCategory,
  type NotificationType,
  notificationCategories,
  notificationTypes,
} from '@relay/contracts'
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useLocation, useSearchParams } from 'react-router'
import { api } from '../api'
import common from '../ui/common.module.css'
import { FilterSelect } from './FilterSelect'
import { HistoryTable } from './HistoryTable'
import { categoryLabels, typeLabels } from './labels'
import styles from './NotificationsPage.module.css'

const pageSize = 25
/** The first page follows new notifications; older pages stay put while being read. */
const firstPageRefreshMs = 15_000

const typeNames = Object.keys(notificationTypes) as NotificationType[]
const categoryNames = Object.keys(notificationCategories) as NotificationCategory[]

/** Kept in the history entry: the `before` cursors of the newer pages, so "Newer" can step back. */
type PagingState = { newer: (number | null)[] }

/** Every notification the relay made, newest first, filtered by category and type, a page at a time. */
export function NotificationsPage() {
  const [searchParams, setSearchParams] = useSearchParams()
  const location = useLocation()
  const category = oneOf(searchParams.get('category'), categoryNames)
  const type = oneOf(searchParams.get('type'), typeNames)
  const before = cursorParam(searchParams.get('before'))
  const newer = (location.state as PagingState | null)?.newer ?? []
  const isFiltered = category !== undefined || type !== undefined

  const history = useQuery({
    queryKey: ['notifications', 'history', { category, type, before }],
    queryFn: ({ signal }) => api.notificationHistory({ limit: pageSize, category, type, before }, signal),
    placeholderData: keepPreviousData,
    refetchInterval: before === undefined ? firstPageRefreshMs : false,
    // One quick retry, then the error shows with its own button to try again.
    retry: 1,
  })

  const setFilter = (name: 'category' | 'type', value: string) => {
    const next = new URLSearchParams(searchParams)
    if (value) {
      next.set(name, value)
    } else {
      next.delete(name)
    }
    next.delete('before')
    setSearchParams(next)
  }
  const clearFilters = () => setSearchParams({})
  const goOlder = (nextCursor: number) => {
    const next = new URLSearchParams(searchParams)
    next.set('before', String(nextCursor))
    setSearchParams(next, { state: { newer: [...newer, before ?? null] } satisfies PagingState })
  }
  const goNewer = () => {
    const next = new URLSearchParams(searchParams)
    // Opened on an older page from a link, with no trail: newer goes back to the newest page.
    const previous = newer.at(-1) ?? null
    if (previous === null) {
      next.delete('before')
    } else {
      next.set('before', String(previous))
    }
    setSearchParams(next, { state: { newer: newer.slice(0, -1) } satisfies PagingState })
  }

  const reply = history.data
  return (
    <>
      <title>Notifications · Relay</title>
      <div className={styles.pageHeader}>
        <h1>Notifications</h1>
        {reply && (
          <p className={common.pageHeaderNote} data-testid="history-total">
            {countLabel(reply.total, isFiltered)}
          </p>
        )}
      </div>

      <div className={styles.filters}>
        <FilterSelect
          label="Category"
          value={category ?? ''}
          allLabel="All categories"
          options={categoryNames.map((name) => ({ value: name, label: categoryLabels[name] }))}
          onChange={(value) => setFilter('category', value)}
        />
        <FilterSelect
          label="Type"
          value={type ?? ''}
          allLabel="All types"
          options={typeNames.map((name) => ({ value: name, label: typeLabels[name] }))}
          onChange={(value) => setFilter('type', value)}
        />
        {isFiltered && (
          <button type="button" className={styles.linkButton} onClick={clearFilters}>
            Clear filters
          </button>
        )}
      </div>

      {history.isPending && (
        <p role="status" className={styles.muted}>
          Loading notifications…
        </p>
      )}
      {history.isError && (
        <div role="alert" className={styles.error} data-testid="history-error">
          <strong>Could not load the notification history</strong>
          <p>{history.error.message}</p>
          <button type="button" className={styles.button} onClick={() => void history.refetch()}>
            Try again
          </button>
        </div>
      )}
      {reply && reply.notifications.length === 0 && (
        <div className={styles.empty} data-testid="history-empty">
          {isFiltered ? (
            <>
              <p>No notifications match these filters.</p>
              <button type="button" className={styles.button} onClick={clearFilters}>
                Clear filters
              </button>
            </>
          ) : (
            <p>
              No notifications yet. What the relay reports (backups, sign-ins, devices, updates) will be listed here.
            </p>
          )}
        </div>
      )}
      {reply && reply.notifications.length > 0 && (
        <HistoryTable notifications={reply.notifications} isStale={history.isPlaceholderData} />
      )}
      {reply && (before !== undefined || reply.nextCursor !== null) && (
        <nav className={styles.pager} aria-label="Pages">
          <button type="button" className={styles.button} disabled={before === undefined} onClick={goNewer}>
            ← Newer
          </button>
          <button
            type="button"
            className={styles.button}
            disabled={reply.nextCursor === null}
            onClick={() => reply.nextCursor !== null && goOlder(reply.nextCursor)}
          >
            Older →
          </button>
        </nav>
      )}
    </>
  )
}

function countLabel(total: number, isFiltered: boolean): string {
  const noun = total === 1 ? 'notification' : 'notifications'
  return `${total} ${isFiltered ? `matching ${noun}` : noun}`
}

function oneOf<T extends string>(value: string | null, allowed: readonly T[]): T | undefined {
  return allowed.find((name) => name === value)
}

function cursorParam(value: string | null): number | undefined {
  if (value === null || !/^\d+$/.test(value)) {
    return undefined
  }
  return Number(value)
}
