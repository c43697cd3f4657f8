import { useEffect } from 'react'
import { useLocation } from 'react-router'

/**
 * The row a link points at (`#collector-<id>`), scrolled into view once the list has rendered. A
 * client-side navigation leaves `:target` unset, so rows compare their id to the returned one.
 */
export function useLinkedRow(isListShown: boolean): string | undefined {
  const { hash } = useLocation()
  const linked = hash ? decodeURIComponent(hash.slice(1)) : undefined
  useEffect(() => {
    if (isListShown && linked) {
      document.getElementById(linked)?.scrollIntoView({ block: 'center' })
    }
  }, [isListShown, linked])
  return linked
}
