import { useEffect, useState } from 'react'
import { formatRelativeTime } from './format-relative-time'

const tickMs = 30_000

/** A `<time>` reading "3 min ago" that keeps itself current; the exact time is in its tooltip. */
export function RelativeTime({ value }: { value: string }) {
  const now = useNow(tickMs)
  const date = new Date(value)
  return (
    <time dateTime={date.toISOString()} title={date.toLocaleString()}>
      {formatRelativeTime(date, now)}
    </time>
  )
}

function useNow(everyMs: number): Date {
  const [now, setNow] = useState(() => new Date())
  useEffect(() => {
    const timer = setInterval(() => setNow(new Date()), everyMs)
    return () => clearInterval(timer)
  }, [everyMs])
  return now
}
