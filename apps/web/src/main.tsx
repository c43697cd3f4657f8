import { QueryClientProvider } from '@tanstack/react-query'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { RouterProvider } from 'react-router'
import { createQueryClient } from './query-client'
import { router } from './router'
import { applyTheme, followSystemTheme, storedPreference } from './shell/theme'
import './styles.css'

// index.html set the theme already; this keeps it following the system while the choice is "system".
applyTheme(storedPreference())
followSystemTheme()

const queryClient = createQueryClient()

const rootElement = document.getElementById('root')
if (!rootElement) {
  throw new Error('index.html has no #root element')
}

createRoot(rootElement).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
)
