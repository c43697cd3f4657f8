import type { UseQueryResult } from '@tanstack/react-query'
import common from './common.module.css'

/**
 * What a part of a page shows while its query loads, or when it failed with nothing to show: a
 * sentence, the reason and a way to try again. Renders nothing once there is data.
 */
export function QueryStatus({
  query,
  loading,
  failed,
  className = '',
}: {
  query: UseQueryResult<unknown>
  /** e.g. "Reading the keep policy…" */
  loading: string
  /** e.g. "Could not read the keep policy" */
  failed: string
  className?: string
}) {
  if (query.isPending) {
    return (
      <p role="status" className={`${common.mutedText} ${className}`}>
        {loading}
      </p>
    )
  }
  if (query.isError && query.data === undefined) {
    return (
      <div role="alert" className={`${common.alert} ${className}`}>
        <strong>{failed}</strong>
        <p>{query.error.message}</p>
        <button
          type="button"
          className={common.secondary}
          disabled={query.isFetching}
          onClick={() => void query.refetch()}
        >
          {query.isFetching ? 'Trying…' : 'Try again'}
        </button>
      </div>
    )
  }
  return null
}
