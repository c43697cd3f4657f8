import { Link, NavLink, Outlet } from 'react-router'
import { CloudOutcomeAlert } from '../auth/CloudOutcomeAlert'
import { userKindLabels } from '../auth/labels'
import { useAuthStatus } from '../auth/use-auth-status'
import { useSignOut } from '../auth/use-sign-out'
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
        <SignedInUser />
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
        <CloudOutcomeAlert />
        <Outlet />
      </main>
      <NotificationCenter />
    </div>
  )
}

function SignedInUser() {
  const user = useAuthStatus().data?.user
  const signOut = useSignOut()
  if (!user) {
    return null
  }
  return (
    <div className={styles.user}>
      <span className={styles.userText} data-testid="signed-in-user">
        <span className={styles.userName}>{user.name}</span>
        <span className={styles.userKind}>{userKindLabels[user.kind]}</span>
      </span>
      <button type="button" className={styles.signOut} disabled={signOut.isPending} onClick={() => signOut.mutate()}>
        {signOut.isPending ? 'Signing out…' : 'Sign out'}
      </button>
    </div>
  )
}
