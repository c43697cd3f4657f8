export * from './chromium.js'
export * from './postgres.js'
export * from './requirement.js'
export * from './temp.js'
