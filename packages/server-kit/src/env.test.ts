import { Type } from 'typebox'
import { describe, expect, it } from 'vitest'
import { ConfigError, parseEnv } from './env.js'

const Schema = Type.Object({
  PORT: Type.Integer({ default: 80 }),
  DEBUG: Type.Boolean({ default: false }),
  NAME: Type.String({ minLength: 1 }),
})

describe('parseEnv', () => {
  it('applies defaults, trims and converts', () => {
    expect(parseEnv(Schema, { NAME: ' relay ', DEBUG: 'true', OTHER: 'ignored' })).toEqual({
      PORT: 80,
      DEBUG: true,
      NAME: 'relay',
    })
  })

  it('reports a missing required key by name', () => {
    expect(() => parseEnv(Schema, { NAME: '   ' })).toThrow(/NAME/)
  })

  it('collects every problem into one error', () => {
    const error = (() => {
      try {
        parseEnv(Schema, { PORT: 'x', DEBUG: 'perhaps' })
      } catch (err) {
        return err as ConfigError
      }
      throw new Error('expected a ConfigError')
    })()
    expect(error).toBeInstanceOf(ConfigError)
    expect(error.problems.map((problem) => problem.split(':')[0]).sort()).toEqual(['DEBUG', 'NAME', 'PORT'])
  })
})
