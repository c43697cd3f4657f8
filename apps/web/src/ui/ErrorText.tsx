import common from './common.module.css'
import { explainError } from './friendly-error'

/** An error as a sentence, with the text it came from on a smaller line below when they differ. */
export function ErrorText({ raw, className }: { raw: string; className?: string }) {
  const { sentence, detail } = explainError(raw)
  return (
    <span className={className} data-testid="error-text">
      {sentence}
      {detail && (
        <span className={common.errorDetail} data-testid="error-detail">
          {detail}
        </span>
      )}
    </span>
  )
}
