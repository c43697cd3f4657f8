import { createBrowserRouter, Navigate } from 'react-router'
import { DashboardPage } from './dashboard/DashboardPage'
import { NotificationsPage } from './notifications/NotificationsPage'
import { SettingsPage } from './settings/SettingsPage'
import { AppShell } from './shell/AppShell'
import { NotFoundPage } from './shell/NotFoundPage'
import { RouteError } from './shell/RouteError'
import { SourcesPage } from './sources/SourcesPage'
import { SystemPage } from './system/SystemPage'

export const router = createBrowserRouter([
  {
    element: <AppShell />,
    children: [
      {
        // Inside the shell, so a crashing page keeps the navigation usable.
        errorElement: <RouteError />,
        children: [
          { index: true, element: <Navigate to="/dashboard" replace /> },
          { path: 'dashboard', element: <DashboardPage /> },
          { path: 'sources', element: <SourcesPage /> },
          { path: 'notifications', element: <NotificationsPage /> },
          { path: 'settings', element: <SettingsPage /> },
          { path: 'system', element: <SystemPage /> },
          { path: '*', element: <NotFoundPage /> },
        ],
      },
    ],
  },
])
