import { describe, expect, it } from 'vitest'
import { createToastQueue, receive, release, takeShowable } from './toast-queue'

type Item = { id: string; hidden?: boolean }
const items = (...ids: string[]): Item[] => ids.map((id) => ({ id }))
const ids = (list: readonly Item[]) => list.map((item) => item.id)

describe('toast queue', () => {
  it('shows up to the limit and keeps the rest waiting in arrival order', () => {
    const queue = receive(createToastQueue<Item>(), items('a', 'b', 'c', 'd'))
    const taken = takeShowable(queue, 2)
    expect(ids(taken.show)).toEqual(['a', 'b'])
    expect(taken.queue.visible).toEqual(['a', 'b'])
    expect(ids(taken.queue.waiting)).toEqual(['c', 'd'])
    expect(takeShowable(taken.queue, 2).show).toEqual([])
  })

  it('fills a freed slot with the next waiting notification', () => {
    let queue = takeShowable(receive(createToastQueue<Item>(), items('a', 'b', 'c')), 2).queue
    queue = release(queue, 'b')
    const taken = takeShowable(queue, 2)
    expect(ids(taken.show)).toEqual(['c'])
    expect(taken.queue.visible).toEqual(['a', 'c'])
  })

  it('ignores a notification it has already received, shown or not', () => {
    let queue = takeShowable(receive(createToastQueue<Item>(), items('a', 'b')), 1).queue
    queue = receive(queue, items('a', 'b', 'c'))
    expect(ids(queue.waiting)).toEqual(['b', 'c'])
    queue = release(queue, 'a')
    queue = receive(queue, items('a'))
    expect(ids(takeShowable(queue, 5).show)).toEqual(['b', 'c'])
  })

  it('lets hidden notifications leave the line without taking a slot', () => {
    const queue = receive(createToastQueue<Item>(), [{ id: 'a', hidden: true }, { id: 'b' }, { id: 'c', hidden: true }])
    const taken = takeShowable(queue, 1, (item) => !item.hidden)
    expect(ids(taken.show)).toEqual(['b'])
    expect(ids(taken.skipped)).toEqual(['a'])
    expect(ids(taken.queue.waiting)).toEqual(['c'])
  })

  it('shows more when the limit rises and closes none when it falls', () => {
    let queue = takeShowable(receive(createToastQueue<Item>(), items('a', 'b', 'c', 'd')), 1).queue
    queue = takeShowable(queue, 3).queue
    expect(queue.visible).toEqual(['a', 'b', 'c'])
    const lowered = takeShowable(queue, 1)
    expect(lowered.show).toEqual([])
    expect(lowered.queue.visible).toEqual(['a', 'b', 'c'])
  })

  it('treats releasing an unknown id as a no-op', () => {
    const queue = takeShowable(receive(createToastQueue<Item>(), items('a')), 1).queue
    expect(release(queue, 'zzz')).toBe(queue)
  })
})
