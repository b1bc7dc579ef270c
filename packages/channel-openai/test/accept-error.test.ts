import { SwbError, SwbErrorCode } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { acceptError } from '../src/http-answers.js';

describe('acceptError', () => {
  it('a database outage is a retryable 503 storage_unavailable, like a shutdown; other failures stay a 500', () => {
    expect(acceptError(new SwbError(SwbErrorCode.StorageUnavailable))).toMatchObject({ status: 503, type: 'server_error', code: 'storage_unavailable' });
    expect(acceptError(new SwbError(SwbErrorCode.ShuttingDown))).toMatchObject({ status: 503, code: 'shutting_down' });
    expect(acceptError(new Error('connect ECONNREFUSED'))).toBeNull();
  });
});
