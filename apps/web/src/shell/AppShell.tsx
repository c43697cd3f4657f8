import { type KeyboardEvent, useEffect, useId, useRef, useState } from 'react'
import { Link, NavLink, Outlet, useLocation } from 'react-router'
import { CloudOutcomeAlert } from '../auth/CloudOutcomeAlert'
import { userKindLabels } from '../auth/labels'
import { useAuthStatus } from '../auth/use-auth-status'
import { useSignOut } from '../auth/use-sign-out'
import { NotificationCenter } from '../notifications/NotificationCenter'
import styles from './AppShell.module.css'
import { navItems } from './nav-items'
import { ThemeSelect } from './ThemeSelect'

export function AppShell() {
  const menu = usePhoneMenu()
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
        <button
          ref={menu.buttonRef}
          type="button"
          className={styles.menuButton}
          aria-expanded={menu.isOpen}
          aria-controls={menu.navId}
          onClick={menu.toggle}
          onKeyDown={menu.closeOnEscape}
        >
          Menu
        </button>
      </header>
      <nav
        id={menu.navId}
        className={styles.nav}
        aria-label="Main"
        data-open={menu.isOpen}
        onKeyDown={menu.closeOnEscape}
      >
        <ul className={styles.navList}>
          {navItems.map((item) => (
            <li key={item.to}>
              <NavLink to={item.to} className={styles.navLink} onClick={menu.close}>
                {item.label}
              </NavLink>
            </li>
          ))}
        </ul>
        <ThemeSelect />
      </nav>
      <main id="main" className={styles.main} tabIndex={-1}>
        <CloudOutcomeAlert />
        <Outlet />
      </main>
      <NotificationCenter />
    </div>
  )
}

/**
 * On a phone the navigation folds behind a Menu button (CSS hides the button on wider screens).
 * It closes on navigation, and on Escape with the focus back on the button.
 */
function usePhoneMenu() {
  const [isOpen, setOpen] = useState(false)
  const buttonRef = useRef<HTMLButtonElement>(null)
  const { pathname, search } = useLocation()
  // biome-ignore lint/correctness/useExhaustiveDependencies: closes whenever the location changes.
  useEffect(() => setOpen(false), [pathname, search])
  return {
    isOpen,
    navId: useId(),
    buttonRef,
    toggle: () => setOpen(!isOpen),
    close: () => setOpen(false),
    closeOnEscape: (event: KeyboardEvent) => {
      if (isOpen && event.key === 'Escape') {
        setOpen(false)
        buttonRef.current?.focus()
      }
    },
  }
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
