import swagger, { type SwaggerTransform } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';

/** Where the control API lives; only its routes appear in the OpenAPI document. */
export const API_PREFIX = '/api/v1';
/** The OpenAPI document's own path (public: it holds no secrets). */
export const OPENAPI_PATH = `${API_PREFIX}/openapi.json`;

const errorBody = {
  type: 'object',
  properties: { code: { type: 'string' }, message: { type: 'string' } },
  required: ['code', 'message'],
};
const errorResponse = (description: string) => ({ description, ...errorBody });

/**
 * Keeps only control-API routes, converts their zod schemas to JSON Schema, and documents what
 * every route shares: bearer auth, its operator scope (`x-switchboard-scope`; console routes: who may
 * call them, `x-switchboard-access`) and the error shape.
 */
const transform: SwaggerTransform = (doc) => {
  const { url, route } = doc;
  if (!url.startsWith(`${API_PREFIX}/`) || url === OPENAPI_PATH) return { schema: { hide: true } as never, url };
  const converted = jsonSchemaTransform(doc as never) as { schema?: Record<string, unknown>; url: string };
  const out = { url: converted.url, schema: converted.schema ?? {} };
  const scope = (route.config as { scope?: string } | undefined)?.scope;
  // Console routes (sign-in, a member's own data, the live stream) are not operator-scoped: they say who may call them instead.
  const access = (route.config as { access?: string } | undefined)?.access ?? 'operator';
  const response = (out.schema.response as Record<string, unknown> | undefined) ?? { 200: { description: 'OK', type: 'object', additionalProperties: true } };
  return {
    url: out.url,
    schema: {
      ...out.schema,
      security: [{ bearerAuth: [] }],
      'x-switchboard-scope': scope ?? null,
      ...(access === 'operator' ? {} : { 'x-switchboard-access': access }),
      description:
        `${(out.schema.description as string | undefined) ?? ''}${scope ? `Needs an operator token with the "${scope}" scope${scope === 'admin' ? '' : ' (or "admin")'}.` : ''}`.trim(),
      response: {
        ...response,
        400: errorResponse('Malformed input; the message names the field.'),
        401: errorResponse('No token, or a wrong or revoked one.'),
        403: errorResponse('The token lacks the scope this route needs.'),
        404: errorResponse('No such record or route.'),
        409: errorResponse('Conflicts with the current state (duplicate, already decided, …).'),
        429: errorResponse('Too many failed authentication attempts from this address; see Retry-After.'),
      },
    } as never,
  };
};

/**
 * Registers @fastify/swagger (collecting routes registered after it), Swagger UI at `/docs`, and
 * the OpenAPI document at `GET /api/v1/openapi.json`. Call before the control API is registered.
 */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Switchboard control API',
        version,
        description: 'Operator API of the Switchboard gateway. Send `Authorization: Bearer <operator token>`; scopes come only from the token record.',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
    },
    transform,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
}
