import { NavLink, Outlet } from 'react-router'
import common from '../ui/common.module.css'
import styles from './SettingsPage.module.css'

const tabs = [
  { to: 'notifications', label: 'Notifications' },
  { to: 'account', label: 'Account' },
] as const

/** Settings, one area at a time; the open one is in the path (`/settings/account`). */
export function SettingsPage() {
  return (
    <>
      <h1 className={styles.heading}>Settings</h1>
      <nav className={styles.tabs} aria-label="Settings">
        {tabs.map((tab) => (
          <NavLink key={tab.to} to={tab.to} className={common.tab} data-testid={`tab-${tab.to}`}>
            {tab.label}
          </NavLink>
        ))}
      </nav>
      <Outlet />
    </>
  )
}
