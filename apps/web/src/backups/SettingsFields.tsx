import { type BackupFrequency, type BackupSettingsChange, backupFrequencies } from '@relay/contracts'
import type { ReactNode } from 'react'
import common from '../ui/common.module.css'
import form from '../ui/form.module.css'
import { SettingRow } from '../ui/SettingRow'
import styles from './BackupsPage.module.css'
import { type Component, componentLabels, frequencyHints, frequencyLabels } from './labels'
import { retentionRange } from './retention'

/** Says plainly what including the keys means; it is the one choice that changes who can read the secrets. */
export function KeysNote({ included }: { included: boolean }) {
  return included ? (
    <p className={`${common.warning} ${common.smallNote} ${styles.rowNote}`} data-testid="keys-note">
      With the keys in the backup, anyone who holds the backup file can decrypt the passwords and tokens stored in this
      relay. Keep downloaded backups as safe as the relay itself.
    </p>
  ) : (
    <p className={`${common.note} ${common.smallNote} ${styles.rowNote}`} data-testid="keys-note">
      Without the keys, stored passwords and tokens are only ciphertext in the backup: nobody can read them from it.
      Restoring onto another machine then needs this relay's key too.
    </p>
  )
}

/** One optional part of the backup, switched on or off. */
export function ComponentField(props: {
  component: Exclude<Component, 'includeKeys'>
  checked: boolean
  onChange: (change: BackupSettingsChange) => void
  children: ReactNode
}) {
  return (
    <CheckField
      label={componentLabels[props.component]}
      checked={props.checked}
      onChange={(checked) => props.onChange({ [props.component]: checked })}
      testId={props.component === 'includeIdentity' ? 'include-identity' : 'include-frame-engine'}
    >
      {props.children}
    </CheckField>
  )
}

/** A checkbox row: what to include, with what it means. */
export function CheckField(props: {
  label: string
  checked: boolean
  disabled?: boolean
  onChange?: (checked: boolean) => void
  testId?: string
  children: ReactNode
}) {
  return (
    <SettingRow
      className={styles.field}
      label={props.label}
      help={props.children}
      disabled={props.disabled}
      controlFirst
    >
      {(control) => (
        <input
          {...control}
          type="checkbox"
          className={styles.checkbox}
          checked={props.checked}
          disabled={props.disabled}
          data-testid={props.testId}
          onChange={(event) => props.onChange?.(event.target.checked)}
        />
      )}
    </SettingRow>
  )
}

/** How often automatic backups run. */
export function FrequencyField({
  value,
  onChange,
}: {
  value: BackupFrequency
  onChange: (value: BackupFrequency) => void
}) {
  return (
    <SettingRow className={styles.field} label="Frequency" help="How often automatic backups run.">
      {(control) => (
        <select
          {...control}
          className={form.select}
          value={value}
          onChange={(event) => onChange(event.target.value as BackupFrequency)}
        >
          {backupFrequencies.map((frequency) => (
            <option key={frequency} value={frequency}>
              {frequencyLabels[frequency]} ({frequencyHints[frequency]})
            </option>
          ))}
        </select>
      )}
    </SettingRow>
  )
}

/** How many days Relay Cloud keeps each backup; saved when the input loses focus. */
export function RetentionField(props: {
  value: string
  error: string | null
  onChange: (text: string) => void
  onCommit: () => void
}) {
  return (
    <SettingRow
      className={styles.field}
      label="Keep each backup for"
      help={
        <>
          Relay Cloud deletes a backup this many days after it was made. A change applies to new backups.{' '}
          <span className={form.range}>
            ({retentionRange.min}–{retentionRange.max} days)
          </span>
        </>
      }
      error={props.error}
      errorTestId="retention-error"
    >
      {(control) => (
        <div className={form.inputRow}>
          <input
            {...control}
            type="number"
            inputMode="numeric"
            className={form.number}
            value={props.value}
            min={retentionRange.min}
            max={retentionRange.max}
            step={1}
            onChange={(event) => props.onChange(event.target.value)}
            onBlur={props.onCommit}
          />
          <span className={form.unit}>days</span>
        </div>
      )}
    </SettingRow>
  )
}
