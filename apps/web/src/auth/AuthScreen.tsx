import type { ReactNode } from 'react'
import styles from './AuthScreen.module.css'

/** The page around the screens shown before the app: setup, sign-in, loading. */
export function AuthScreen({ title, wide, children }: { title: string; wide?: boolean; children: ReactNode }) {
  return (
    <div className={styles.screen}>
      <title>{`${title} · Relay`}</title>
      <span className={styles.brand}>
        <span className={styles.logo} aria-hidden="true">
          R
        </span>
        Relay
      </span>
      <main className={wide ? `${styles.card} ${styles.wide}` : styles.card}>{children}</main>
    </div>
  )
}
