import type { ReactNode } from 'react'
import styles from './MessagePage.module.css'

/** A full-page message (not found, crashed page) with a way out. */
export function MessagePage({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className={styles.message}>
      <title>{`${title} · Relay`}</title>
      <h1>{title}</h1>
      {children}
    </section>
  )
}
