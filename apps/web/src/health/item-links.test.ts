import type { HealthIssue } from '@relay/contracts'
import { describe, expect, it } from 'vitest'
import { areaLink, issueLink, parseHealthItem, sourceLink } from './item-links'

const id = '0b7e2c8a-5d1f-4c3e-9a6b-2f8d1e4c7a90'

const issue = (fields: Partial<HealthIssue>): HealthIssue => ({
  id: 'x',
  type: 'error',
  title: 't',
  description: 'd',
  timestamp: null,
  area: 'Collectors',
  ...fields,
})

describe('links to sources', () => {
  it('points at the item row on its tab', () => {
    expect(sourceLink('collector', id)).toBe(`/sources?tab=collectors#collector-${id}`)
    expect(sourceLink('stream', id)).toBe(`/sources?tab=streams#stream-${id}`)
    expect(areaLink('Sensors')).toBe('/sources?tab=collectors')
  })

  it('links an issue to its collector or stream, and to its list when it names neither', () => {
    expect(issueLink(issue({ id: `collector-fetch-failed-${id}`, item: `collector:${id}` }))).toBe(
      sourceLink('collector', id),
    )
    expect(issueLink(issue({ id: 'lost', area: 'Sensors', collectorId: id, item: `collector:${id}` }))).toBe(
      sourceLink('collector', id),
    )
    expect(
      issueLink(issue({ id: `sensors-lost-${id}`, area: 'Sensors', collectorId: id, item: `collector:${id}` })),
    ).toBe(sourceLink('collector', id))
    expect(issueLink(issue({ id: `stream-${id}`, area: 'Streams', item: `stream:${id}` }))).toBe(
      sourceLink('stream', id),
    )
    expect(issueLink(issue({ id: 'something-else', area: 'Junctions' }))).toBe('/sources?tab=junctions')
  })

  it('reads a health history item', () => {
    expect(parseHealthItem(`stream:${id}`)).toEqual({ kind: 'stream', id })
    expect(parseHealthItem('junction:x')).toBeUndefined()
  })
})
