import type { Sensor, SensorSeries } from '@relay/contracts'
import { useHeartbeat } from '../health/queries'
import { Sparkline } from '../health/Sparkline'
import common from '../ui/common.module.css'
import { RelativeTime } from '../ui/RelativeTime'
import { useSensors } from './queries'
import styles from './SourcesPage.module.css'

/**
 * The sensors a collector has reported, with their latest values and a sparkline of the last hour
 * from the collector's heartbeat history (already loaded for its row, so no request of its own).
 */
export function CollectorSensors({ collectorId }: { collectorId: string }) {
  const sensors = useSensors(collectorId)
  const history = useHeartbeat(`collector:${collectorId}`)
  const seriesOf = new Map((history.data?.sensors ?? []).map((series) => [series.sensor, series]))
  if (sensors.isPending) {
    return (
      <p role="status" className={common.mutedText}>
        Loading sensors…
      </p>
    )
  }
  if (!sensors.data) {
    return (
      <p role="alert" className={styles.bad}>
        Could not load the sensors: {sensors.error?.message}
      </p>
    )
  }
  if (sensors.data.length === 0) {
    return <p className={common.mutedText}>No sensors yet. They appear after the first successful fetch.</p>
  }
  return (
    <table className={styles.sensorTable} data-testid="sensor-list">
      <thead>
        <tr>
          <th scope="col">Sensor</th>
          <th scope="col">Value</th>
          <th scope="col">Last hour</th>
          <th scope="col">Updated</th>
        </tr>
      </thead>
      <tbody>
        {sensors.data.map((sensor) => (
          <tr key={sensor.id} className={sensor.missing ? styles.missing : undefined}>
            <td>
              {sensor.name}
              {sensor.name !== sensor.externalId && <span className={common.sub}>{sensor.externalId}</span>}
            </td>
            <td className={common.nowrap}>
              {formatValue(sensor)}
              {sensor.missing && <span className={`${common.sub} ${styles.bad}`}>No longer reported</span>}
            </td>
            <td>
              <SensorTrend series={seriesOf.get(sensor.externalId)} name={sensor.name} isLoading={history.isPending} />
            </td>
            <td className={common.nowrap}>{sensor.lastUpdated ? <RelativeTime value={sensor.lastUpdated} /> : '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

/** Text sensors, and sensors too new for the history, have no line to draw. */
function SensorTrend(props: { series: SensorSeries | undefined; name: string; isLoading: boolean }) {
  if (props.series && props.series.points.length > 0) {
    return <Sparkline series={props.series} name={props.name} period="last hour" />
  }
  return <span className={common.mutedText}>{props.isLoading ? 'Loading…' : 'No numeric values'}</span>
}

function formatValue(sensor: Sensor): string {
  if (sensor.value === null) {
    return '—'
  }
  return sensor.unit ? `${sensor.value} ${sensor.unit}` : String(sensor.value)
}
