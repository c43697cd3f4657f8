import type { HealthArea, HealthIssue } from '@relay/contracts'

export type SourceKind = 'collector' | 'stream' | 'junction'

/** The id of an item's row on the Sources page, which links point at: `collector-<id>`. */
export function rowId(kind: SourceKind, id: string): string {
  return `${kind}-${id}`
}

/** Where an item shows on the Sources page: its tab, scrolled to its row. */
export function sourceLink(kind: SourceKind, id: string): string {
  return `/sources?tab=${kind}s#${rowId(kind, id)}`
}

const areaTabs = {
  Collectors: 'collectors',
  Sensors: 'collectors',
  Streams: 'streams',
  Junctions: 'junctions',
} as const satisfies Record<HealthArea, string>

/** The list an area's card links to. */
export function areaLink(area: HealthArea): string {
  return `/sources?tab=${areaTabs[area]}`
}

/** Issue ids end with the id of their item: `collector-fetch-failed-<uuid>`, `stream-<uuid>`. */
const trailingUuid = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i

/** The item a dashboard issue is about; its area's list when the issue names none. */
export function issueLink(issue: HealthIssue): string {
  const id = issue.collectorId ?? trailingUuid.exec(issue.id)?.[1]
  if (!id || issue.area === 'Junctions') {
    return areaLink(issue.area)
  }
  return sourceLink(issue.area === 'Streams' ? 'stream' : 'collector', id)
}

/** A health history item (`collector:<id>`) as its kind and id; undefined for anything else. */
export function parseHealthItem(item: string): { kind: 'collector' | 'stream'; id: string } | undefined {
  const [kind, id] = item.split(':')
  return (kind === 'collector' || kind === 'stream') && id ? { kind, id } : undefined
}
