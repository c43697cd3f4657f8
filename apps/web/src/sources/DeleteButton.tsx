import { useState } from 'react'
import { ConfirmButton } from '../ui/ConfirmButton'

/** Delete in two steps: the first click asks, the second deletes. */
export function DeleteButton({
  name,
  isPending,
  onDelete,
}: {
  name: string
  isPending: boolean
  onDelete: () => void
}) {
  const [isAsking, setAsking] = useState(false)
  return (
    <ConfirmButton
      label="Delete"
      question="Delete?"
      confirmLabel="Yes, delete"
      pendingLabel="Deleting…"
      subject={name}
      isAsking={isAsking}
      onAskingChange={setAsking}
      isPending={isPending}
      onConfirm={onDelete}
    />
  )
}
