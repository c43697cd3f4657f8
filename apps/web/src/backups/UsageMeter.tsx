import { useId } from 'react'
import styles from './BackupsPage.module.css'

/** From this share of the quota on, the meter turns to the warning colour and says so in words. */
const nearLimit = 0.8

/** How much of a quota is used: a labelled meter, with the numbers also in text. */
export function UsageMeter(props: {
  label: string
  value: number
  max: number
  format: (value: number) => string
  testId: string
}) {
  const labelId = useId()
  const share = props.max > 0 ? Math.min(1, props.value / props.max) : 0
  const percent = Math.round(share * 100)
  const level = share >= 1 ? 'full' : share >= nearLimit ? 'near' : 'ok'
  const text = `${props.format(props.value)} of ${props.format(props.max)}`
  return (
    <div className={styles.meter} data-level={level} data-testid={props.testId}>
      <div className={styles.meterText}>
        <span id={labelId} className={styles.meterLabel}>
          {props.label}
        </span>
        <span className={styles.meterValue}>
          {text}
          {level !== 'ok' && (
            <strong className={styles.meterWarning}>{level === 'full' ? ' · Full' : ' · Nearly full'}</strong>
          )}
        </span>
      </div>
      <meter
        aria-labelledby={labelId}
        aria-valuetext={`${text} (${percent}%)`}
        className={styles.meterTrack}
        min={0}
        max={props.max}
        value={Math.min(props.value, props.max)}
      />
    </div>
  )
}
