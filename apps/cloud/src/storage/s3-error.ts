/** An error the embedded endpoint answers in S3's XML shape, so S3 clients map it to their own error types. */
export class S3Error extends Error {
  readonly status: number
  readonly code: string

  constructor(status: number, code: string, message: string) {
    super(message)
    this.name = 'S3Error'
    this.status = status
    this.code = code
  }
}

export function s3ErrorXml(error: S3Error, resource: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${escapeXml(error.code)}</Code><Message>${escapeXml(error.message)}</Message>` +
    `<Resource>${escapeXml(resource)}</Resource></Error>`
  )
}

const xmlEntities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => xmlEntities[char] ?? char)
}
