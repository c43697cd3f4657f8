import { Link, useLocation } from 'react-router'
import { MessagePage } from './MessagePage'

export function NotFoundPage() {
  const { pathname } = useLocation()
  return (
    <MessagePage title="Page not found">
      <p>
        There is no page at <code>{pathname}</code>. It may have moved, or the link may be mistyped.
      </p>
      <p>
        <Link to="/">Back to Relay</Link>
      </p>
    </MessagePage>
  )
}
