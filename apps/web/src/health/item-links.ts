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

/** The item a dashboard issue is about (the relay names it: `collector:<id>`); its area's list otherwise. */
export function issueLink(issue: HealthIssue): string {
  const item = issue.item === undefined ? undefined : parseHealthItem(issue.item)
  return item ? sourceLink(item.kind, item.id) : areaLink(issue.area)
}

/** A health history item (`collector:<id>`) as its kind and id; undefined for anything else. */
export function parseHealthItem(item: string): { kind: 'collector' | 'stream'; id: string } | undefined {
  const [kind, id] = item.split(':')
  return (kind === 'collector' || kind === 'stream') && id ? { kind, id } : undefined
}
