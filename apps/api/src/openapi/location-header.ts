export function locationOf(template: string) {
  return {
    Location: {
      description: `The created record: ${template}`,
      required: true,
      schema: { type: 'string', format: 'uri-reference' },
    },
  };
}
