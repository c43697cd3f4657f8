/** Durations are milliseconds everywhere; these keep the spec's numbers readable. */
export const SECOND = 1000
export const MINUTE = 60 * SECOND
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR

/** Sizes are bytes; the spec's "MB" is a binary megabyte. */
export const MB = 1024 * 1024
