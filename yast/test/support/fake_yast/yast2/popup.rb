# SPDX-License-Identifier: LGPL-2.1-or-later
# FAKE: see ../yast.rb. Mirrors yast2's Yast2::Popup.show: records the questions and the
# errors it is given (rich text as the plain text it shows), and answers a :yes_no
# question with .answer.

require "cgi"

module Yast2
  class Popup
    class << self
      attr_accessor :answer
      attr_reader :asked, :errors

      def reset
        @answer = true
        @asked = []
        @errors = []
      end

      def show(message, headline: "", buttons: :ok, richtext: false, **_rest)
        if richtext
          message = CGI.unescapeHTML(message.gsub("</p>", "\n\n").gsub("<br>", "\n").gsub(/<[^>]*>/, "")).strip
        end
        if buttons == :yes_no
          @asked << message
          return @answer ? :yes : :no
        end
        @errors << message if headline == :error
        :ok
      end
    end
    reset
  end
end
