"""X-SQL-Queries: how many SQL statements a response took (benchmark only)."""

from django.db import connection


def count_queries(get_response):
    def middleware(request):
        count = 0

        def counter(execute, sql, params, many, context):
            nonlocal count
            count += 1
            return execute(sql, params, many, context)

        with connection.execute_wrapper(counter):
            response = get_response(request)
        response["X-SQL-Queries"] = str(count)
        return response

    return middleware
