export type NavItem = { to: string; label: string }

/** The sidebar, in order. Add a page here once its route exists in router.tsx. */
export const navItems: readonly NavItem[] = [
  { to: '/dashboard', label: 'Dashboard' },
  { to: '/sources', label: 'Sources' },
  { to: '/backups', label: 'Backups' },
  { to: '/notifications', label: 'Notifications' },
  { to: '/settings', label: 'Settings' },
  { to: '/system', label: 'System' },
]
