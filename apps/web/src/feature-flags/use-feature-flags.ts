import { useQuery } from '@tanstack/react-query'
import { api } from '../api'

export const featureFlagsKey = ['feature-flags'] as const

/** The relay's feature flags; refetched now and then, so a change made in another tab reaches this one. */
export function useFeatureFlags() {
  return useQuery({
    queryKey: featureFlagsKey,
    queryFn: ({ signal }) => api.featureFlags(signal),
    refetchInterval: 60_000,
  })
}
