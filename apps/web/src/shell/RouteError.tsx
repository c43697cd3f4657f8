import { Link, useRouteError } from 'react-router'
import { MessagePage } from './MessagePage'

export function RouteError() {
  const error = useRouteError()
  return (
    <MessagePage title="Something went wrong">
      <p>This page failed to render: {error instanceof Error ? error.message : String(error)}</p>
      <p>
        <Link to="/" reloadDocument>
          Reload Relay
        </Link>
      </p>
    </MessagePage>
  )
}
