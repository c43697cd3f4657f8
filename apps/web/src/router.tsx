import { type ComponentType, lazy, Suspense } from 'react'
import { createBrowserRouter, Navigate } from 'react-router'
import { AuthGate } from './auth/AuthGate'
import { AppShell } from './shell/AppShell'
import { NotFoundPage } from './shell/NotFoundPage'
import { RouteError } from './shell/RouteError'
import common from './ui/common.module.css'

/**
 * A page loaded with its route, so the first screen downloads only the shell and the page it shows.
 * Each page suspends on its own, so the navigation (and the settings tabs) stay while the next one loads.
 */
function lazyPage(load: () => Promise<ComponentType>) {
  const Page = lazy(async () => ({ default: await load() }))
  return (
    <Suspense fallback={<PageLoading />}>
      <Page />
    </Suspense>
  )
}

function PageLoading() {
  return (
    <p role="status" className={common.mutedText} data-testid="page-loading">
      Loading page…
    </p>
  )
}

export const router = createBrowserRouter([
  {
    // Setup and sign-in come before the shell, so nothing polls the API until the relay accepts the browser.
    element: <AuthGate />,
    children: [
      {
        element: <AppShell />,
        children: [
          {
            // Inside the shell, so a crashing page (or one whose code fails to load) keeps the navigation usable.
            errorElement: <RouteError />,
            children: [
              { index: true, element: <Navigate to="/dashboard" replace /> },
              {
                path: 'dashboard',
                element: lazyPage(async () => (await import('./dashboard/DashboardPage')).DashboardPage),
              },
              { path: 'sources', element: lazyPage(async () => (await import('./sources/SourcesPage')).SourcesPage) },
              { path: 'backups', element: lazyPage(async () => (await import('./backups/BackupsPage')).BackupsPage) },
              {
                path: 'notifications',
                element: lazyPage(async () => (await import('./notifications/NotificationsPage')).NotificationsPage),
              },
              {
                path: 'settings',
                element: lazyPage(async () => (await import('./settings/SettingsPage')).SettingsPage),
                children: [
                  { index: true, element: <Navigate to="notifications" replace /> },
                  {
                    path: 'notifications',
                    element: lazyPage(
                      async () => (await import('./settings/NotificationSettingsPage')).NotificationSettingsPage,
                    ),
                  },
                  { path: 'account', element: lazyPage(async () => (await import('./auth/AccountPage')).AccountPage) },
                ],
              },
              { path: 'system', element: lazyPage(async () => (await import('./system/SystemPage')).SystemPage) },
              { path: '*', element: <NotFoundPage /> },
            ],
          },
        ],
      },
    ],
  },
])
