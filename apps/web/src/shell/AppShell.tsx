import { Link, NavLink, Outlet } from 'react-router'
import { NotificationCenter } from '../notifications/NotificationCenter'
import styles from './AppShell.module.css'
import { navItems } from './nav-items'

export function AppShell() {
  return (
    <div className={styles.shell}>
      <a className={styles.skipLink} href="#main">
        Skip to content
      </a>
      <header className={styles.header}>
        <Link to="/" className={styles.brand}>
          <span className={styles.logo} aria-hidden="true">
            R
          </span>
          Relay
        </Link>
      </header>
      <nav className={styles.nav} aria-label="Main">
        <ul className={styles.navList}>
          {navItems.map((item) => (
            <li key={item.to}>
              <NavLink to={item.to} className={styles.navLink}>
                {item.label}
              </NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" className={styles.main} tabIndex={-1}>
        <Outlet />
      </main>
      <NotificationCenter />
    </div>
  )
}
