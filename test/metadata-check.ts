import { z } from "zod";
import { MessageMetadataSchema, shownMetadata } from "../src/messages/metadata";

// Checks a message's stored or shown metadata against its declaration (src/messages/metadata.ts),
// nested objects included: the schema lets unknown keys pass (forward compatibility), so a key a
// writer added without declaring it is found only by walking the value.

/** Paths of the keys of `value` that `schema` does not declare, at any depth. */
export function undeclared(schema: z.core.$ZodType, value: unknown, path = "metadata"): string[] {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable)
    return value === null || value === undefined ? [] : undeclared(schema.unwrap(), value, path);
  if (schema instanceof z.ZodArray)
    return Array.isArray(value)
      ? value.flatMap((item, i) => undeclared(schema.element, item, `${path}[${i}]`))
      : [];
  if (schema instanceof z.ZodObject && typeof value === "object" && value !== null) {
    const shape: Record<string, z.core.$ZodType> = schema.shape;
    return Object.entries(value).flatMap(([key, item]) => {
      const declared = shape[key];
      return declared ? undeclared(declared, item, `${path}.${key}`) : [`${path}.${key}`];
    });
  }
  return [];
}

/**
 * The problems of `metadata` (a parsed object, or the stored JSON text, read as the API shows it:
 * src/messages/metadata.ts `shownMetadata`) against MessageMetadataSchema: its values that do not
 * fit, then its undeclared keys; [] when none.
 */
export function metadataProblems(metadata: unknown): string[] {
  const value: unknown = typeof metadata === "string" ? shownMetadata(metadata) : metadata;
  const parsed = MessageMetadataSchema.safeParse(value);
  return [
    ...(parsed.error?.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`) ?? []),
    ...undeclared(MessageMetadataSchema, value),
  ];
}
