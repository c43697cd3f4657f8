import common from './common.module.css'

/**
 * A table's column headers; `withActions` adds a last column of buttons, named for screen readers only.
 * `hiddenOnPhone` leaves the headers to screen readers where the rows show as cards.
 */
export function TableHead(props: { columns: readonly string[]; withActions?: boolean; hiddenOnPhone?: boolean }) {
  const { columns, withActions = false } = props
  return (
    <thead className={props.hiddenOnPhone ? common.headHiddenOnPhone : undefined}>
      <tr>
        {columns.map((column) => (
          <th key={column} scope="col">
            {column}
          </th>
        ))}
        {withActions && (
          <th scope="col">
            <span className={common.visuallyHidden}>Actions</span>
          </th>
        )}
      </tr>
    </thead>
  )
}
