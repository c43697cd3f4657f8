import common from '../ui/common.module.css'

type Action = { isPending: boolean; mutate: (id: string) => void }

/** Stop for what runs, Start for what does not; disabled while the request is under way. */
export function RunButton({
  id,
  isRunning,
  start,
  stop,
}: {
  id: string
  isRunning: boolean
  start: Action
  stop: Action
}) {
  const action = isRunning ? stop : start
  return (
    <button type="button" className={common.smallButton} disabled={action.isPending} onClick={() => action.mutate(id)}>
      {isRunning ? 'Stop' : 'Start'}
    </button>
  )
}
