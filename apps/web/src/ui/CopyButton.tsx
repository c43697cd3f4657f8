import { useEffect, useState } from 'react'
import styles from './CopyButton.module.css'

type CopyResult = 'copied' | 'failed'

const messages = { copied: 'Copied', failed: 'Copy failed' } satisfies Record<CopyResult, string>

/** Copies `value` to the clipboard; `label` names what is copied, for screen readers. */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [result, setResult] = useState<CopyResult | null>(null)

  useEffect(() => {
    if (!result) {
      return
    }
    const timer = setTimeout(() => setResult(null), 2000)
    return () => clearTimeout(timer)
  }, [result])

  // The Clipboard API exists only in secure contexts (https, localhost); elsewhere the value stays selectable.
  if (!navigator.clipboard) {
    return null
  }

  const copy = () => {
    navigator.clipboard.writeText(value).then(
      () => setResult('copied'),
      () => setResult('failed'),
    )
  }

  return (
    <span className={styles.wrapper}>
      <button type="button" className={styles.button} onClick={copy} aria-label={`Copy ${label}`}>
        Copy
      </button>
      <span role="status" className={result === 'failed' ? styles.failed : styles.copied}>
        {result ? messages[result] : ''}
      </span>
    </span>
  )
}
