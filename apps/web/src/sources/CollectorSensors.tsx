import type { Sensor } from '@relay/contracts'
import common from '../ui/common.module.css'
import { RelativeTime } from '../ui/RelativeTime'
import { useSensors } from './queries'
import styles from './SourcesPage.module.css'

/** The sensors a collector has reported, with their latest values. */
export function CollectorSensors({ collectorId }: { collectorId: string }) {
  const sensors = useSensors(collectorId)
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
            <td className={common.nowrap}>{sensor.lastUpdated ? <RelativeTime value={sensor.lastUpdated} /> : '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function formatValue(sensor: Sensor): string {
  if (sensor.value === null) {
    return '—'
  }
  return sensor.unit ? `${sensor.value} ${sensor.unit}` : String(sensor.value)
}
