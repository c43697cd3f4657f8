import { createBrowserRouter, Navigate } from 'react-router'
import { AccountPage } from './auth/AccountPage'
import { AuthGate } from './auth/AuthGate'
import { BackupsPage } from './backups/BackupsPage'
import { DashboardPage } from './dashboard/DashboardPage'
import { NotificationsPage } from './notifications/NotificationsPage'
import { NotificationSettingsPage } from './settings/NotificationSettingsPage'
import { SettingsPage } from './settings/SettingsPage'
import { AppShell } from './shell/AppShell'
import { NotFoundPage } from './shell/NotFoundPage'
import { RouteError } from './shell/RouteError'
import { SourcesPage } from './sources/SourcesPage'
import { SystemPage } from './system/SystemPage'

export const router = createBrowserRouter([
  {
    // Setup and sign-in come before the shell, so nothing polls the API until the relay accepts the browser.
    element: <AuthGate />,
    children: [
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
              { path: 'backups', element: <BackupsPage /> },
              { path: 'notifications', element: <NotificationsPage /> },
              {
                path: 'settings',
                element: <SettingsPage />,
                children: [
                  { index: true, element: <Navigate to="notifications" replace /> },
                  { path: 'notifications', element: <NotificationSettingsPage /> },
                  { path: 'account', element: <AccountPage /> },
                ],
              },
              { path: 'system', element: <SystemPage /> },
              { path: '*', element: <NotFoundPage /> },
            ],
          },
        ],
      },
    ],
  },
])
